from enum import StrEnum

class WhoamiBodyRole(StrEnum):
    ADMIN = "admin"
    READER = "reader"
    WORKER = "worker"

    def __str__(self) -> str:
        return str(self.value)
