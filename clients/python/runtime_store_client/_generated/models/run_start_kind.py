from enum import StrEnum

class RunStartKind(StrEnum):
    ENGINE = "engine"
    SYNCHRONOUS = "synchronous"

    def __str__(self) -> str:
        return str(self.value)
