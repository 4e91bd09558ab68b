""" Contains all the data models used in inputs/outputs """

from .append_memory_request import AppendMemoryRequest
from .append_record_request import AppendRecordRequest
from .append_result_body import AppendResultBody
from .cancellation_request import CancellationRequest
from .checkpoint_body import CheckpointBody
from .child_run_start_request import ChildRunStartRequest
from .child_run_start_result_body import ChildRunStartResultBody
from .create_session_request import CreateSessionRequest
from .end_session_request import EndSessionRequest
from .field_error import FieldError
from .memory_event_body import MemoryEventBody
from .memory_event_body_data import MemoryEventBodyData
from .memory_event_body_labels_type_0 import MemoryEventBodyLabelsType0
from .one_shot_child_run_start_request import OneShotChildRunStartRequest
from .one_shot_child_run_start_result_body import OneShotChildRunStartResultBody
from .one_shot_run_start_request import OneShotRunStartRequest
from .one_shot_run_start_result_body import OneShotRunStartResultBody
from .problem import Problem
from .record_body import RecordBody
from .record_page_body import RecordPageBody
from .repair_outcome import RepairOutcome
from .repair_result_body import RepairResultBody
from .root_run_start_request import RootRunStartRequest
from .root_run_start_result_body import RootRunStartResultBody
from .run_meta_body import RunMetaBody
from .run_meta_body_labels import RunMetaBodyLabels
from .run_page_body import RunPageBody
from .run_start_body import RunStartBody
from .run_start_body_labels_type_0 import RunStartBodyLabelsType0
from .run_start_outcome import RunStartOutcome
from .run_status import RunStatus
from .session_body import SessionBody
from .session_status import SessionStatus
from .session_status_body import SessionStatusBody
from .snapshot_body import SnapshotBody
from .suspension_request import SuspensionRequest
from .terminal_request import TerminalRequest

__all__ = (
    "AppendMemoryRequest",
    "AppendRecordRequest",
    "AppendResultBody",
    "CancellationRequest",
    "CheckpointBody",
    "ChildRunStartRequest",
    "ChildRunStartResultBody",
    "CreateSessionRequest",
    "EndSessionRequest",
    "FieldError",
    "MemoryEventBody",
    "MemoryEventBodyData",
    "MemoryEventBodyLabelsType0",
    "OneShotChildRunStartRequest",
    "OneShotChildRunStartResultBody",
    "OneShotRunStartRequest",
    "OneShotRunStartResultBody",
    "Problem",
    "RecordBody",
    "RecordPageBody",
    "RepairOutcome",
    "RepairResultBody",
    "RootRunStartRequest",
    "RootRunStartResultBody",
    "RunMetaBody",
    "RunMetaBodyLabels",
    "RunPageBody",
    "RunStartBody",
    "RunStartBodyLabelsType0",
    "RunStartOutcome",
    "RunStatus",
    "SessionBody",
    "SessionStatus",
    "SessionStatusBody",
    "SnapshotBody",
    "SuspensionRequest",
    "TerminalRequest",
)
