from enum import StrEnum

class ImageFormat(StrEnum):
    GIF = "gif"
    JPEG = "jpeg"
    PNG = "png"
    WEBP = "webp"

    def __str__(self) -> str:
        return str(self.value)
