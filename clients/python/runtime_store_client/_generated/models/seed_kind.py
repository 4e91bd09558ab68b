from enum import StrEnum

class SeedKind(StrEnum):
    CONTINUATION = "continuation"
    LITERAL = "literal"
    NEXT_TURN = "next_turn"

    def __str__(self) -> str:
        return str(self.value)
