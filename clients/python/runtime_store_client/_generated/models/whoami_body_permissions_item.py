from enum import StrEnum

class WhoamiBodyPermissionsItem(StrEnum):
    ADMIN = "admin"
    READ = "read"
    WRITE = "write"

    def __str__(self) -> str:
        return str(self.value)
