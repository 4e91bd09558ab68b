from enum import StrEnum

class WebhookEventType(StrEnum):
    RUN_FINISHED = "run.finished"
    RUN_SUSPENDED = "run.suspended"
    SESSION_ENDED = "session.ended"
    SESSION_PURGED = "session.purged"

    def __str__(self) -> str:
        return str(self.value)
