from enum import StrEnum

class TranscriptCheck(StrEnum):
    BEDROCK = "bedrock"
    PLANNER = "planner"

    def __str__(self) -> str:
        return str(self.value)
