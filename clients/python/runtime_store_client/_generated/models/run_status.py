from enum import StrEnum

class RunStatus(StrEnum):
    CANCELED = "canceled"
    COMPLETED = "completed"
    FAILED = "failed"
    RUNNING = "running"
    SUSPENDED = "suspended"

    def __str__(self) -> str:
        return str(self.value)
