from enum import StrEnum

class WaitUntil(StrEnum):
    FINISHED = "finished"
    STOPPED = "stopped"

    def __str__(self) -> str:
        return str(self.value)
