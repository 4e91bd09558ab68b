from enum import StrEnum

class WhoamiBodyMode(StrEnum):
    OPEN = "open"
    TOKENS = "tokens"

    def __str__(self) -> str:
        return str(self.value)
