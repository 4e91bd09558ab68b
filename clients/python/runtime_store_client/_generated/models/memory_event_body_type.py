from enum import StrEnum

class MemoryEventBodyType(StrEnum):
    ASSISTANT_MESSAGE = "assistant_message"
    PLANNER_NOTE = "planner_note"
    THINKING = "thinking"
    TOOL_CALL = "tool_call"
    TOOL_RESULT = "tool_result"
    USER_MESSAGE = "user_message"

    def __str__(self) -> str:
        return str(self.value)
