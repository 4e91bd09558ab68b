from enum import StrEnum

class DocumentFormat(StrEnum):
    CSV = "csv"
    DOC = "doc"
    DOCX = "docx"
    HTML = "html"
    MD = "md"
    PDF = "pdf"
    TXT = "txt"
    XLS = "xls"
    XLSX = "xlsx"

    def __str__(self) -> str:
        return str(self.value)
