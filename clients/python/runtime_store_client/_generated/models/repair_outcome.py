from enum import StrEnum

class RepairOutcome(StrEnum):
    ALREADY_STORED = "already_stored"
    DIFFERENT_TERMINAL = "different_terminal"
    STORED = "stored"

    def __str__(self) -> str:
        return str(self.value)
