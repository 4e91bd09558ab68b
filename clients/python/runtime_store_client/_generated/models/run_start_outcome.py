from enum import StrEnum

class RunStartOutcome(StrEnum):
    PROCEED = "proceed"
    STOP = "stop"

    def __str__(self) -> str:
        return str(self.value)
