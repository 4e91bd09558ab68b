""" Contains all the data models used in inputs/outputs """

from .append_memory_request import AppendMemoryRequest
from .append_record_request import AppendRecordRequest
from .append_records_request import AppendRecordsRequest
from .append_result_body import AppendResultBody
from .append_results_body import AppendResultsBody
from .append_run_seed_request import AppendRunSeedRequest
from .begin_run_seed_request import BeginRunSeedRequest
from .cache_checkpoint_part_body import CacheCheckpointPartBody
from .cancellation_request import CancellationRequest
from .checkpoint_body import CheckpointBody
from .child_run_start_request import ChildRunStartRequest
from .child_run_start_result_body import ChildRunStartResultBody
from .citation_body import CitationBody
from .citation_location_body import CitationLocationBody
from .citations_part_body import CitationsPartBody
from .create_session_request import CreateSessionRequest
from .create_webhook_request import CreateWebhookRequest
from .created_webhook_body import CreatedWebhookBody
from .delivery_page_body import DeliveryPageBody
from .delivery_status import DeliveryStatus
from .document_format import DocumentFormat
from .document_location_body import DocumentLocationBody
from .document_part_body import DocumentPartBody
from .end_session_request import EndSessionRequest
from .field_error import FieldError
from .history_prefix_body import HistoryPrefixBody
from .image_format import ImageFormat
from .image_part_body import ImagePartBody
from .literal_part_body import LiteralPartBody
from .literal_part_seed_record_body import LiteralPartSeedRecordBody
from .memory_event_body import MemoryEventBody
from .memory_event_body_data import MemoryEventBodyData
from .memory_event_body_labels_type_0 import MemoryEventBodyLabelsType0
from .memory_event_body_type import MemoryEventBodyType
from .message_body import MessageBody
from .message_body_meta_type_0 import MessageBodyMetaType0
from .messages_seed_record_body import MessagesSeedRecordBody
from .new_seed_record_body import NewSeedRecordBody
from .one_shot_child_run_start_request import OneShotChildRunStartRequest
from .one_shot_child_run_start_result_body import OneShotChildRunStartResultBody
from .one_shot_run_start_request import OneShotRunStartRequest
from .one_shot_run_start_result_body import OneShotRunStartResultBody
from .prefix_seed_record_body import PrefixSeedRecordBody
from .preparation_answer_body import PreparationAnswerBody
from .preparation_operation_body import PreparationOperationBody
from .prepared_seed_record_body import PreparedSeedRecordBody
from .problem import Problem
from .prompt_scope_body import PromptScopeBody
from .prompt_scope_body_labels_type_0 import PromptScopeBodyLabelsType0
from .publish_run_seed_request import PublishRunSeedRequest
from .record_body import RecordBody
from .record_counts_body import RecordCountsBody
from .record_counts_body_runs import RecordCountsBodyRuns
from .record_counts_body_sessions import RecordCountsBodySessions
from .record_page_body import RecordPageBody
from .rendered_prompt_body import RenderedPromptBody
from .repair_outcome import RepairOutcome
from .repair_result_body import RepairResultBody
from .role import Role
from .root_run_start_request import RootRunStartRequest
from .root_run_start_result_body import RootRunStartResultBody
from .run_meta_body import RunMetaBody
from .run_meta_body_labels import RunMetaBodyLabels
from .run_page_body import RunPageBody
from .run_preparation_body import RunPreparationBody
from .run_seed_body import RunSeedBody
from .run_start_body import RunStartBody
from .run_start_body_labels_type_0 import RunStartBodyLabelsType0
from .run_start_kind import RunStartKind
from .run_start_outcome import RunStartOutcome
from .run_status import RunStatus
from .seed_append_result_body import SeedAppendResultBody
from .seed_declaration_body import SeedDeclarationBody
from .seed_kind import SeedKind
from .seed_page_body import SeedPageBody
from .session_body import SessionBody
from .session_page_body import SessionPageBody
from .session_run_start_body import SessionRunStartBody
from .session_run_start_body_labels_type_0 import SessionRunStartBodyLabelsType0
from .session_status import SessionStatus
from .session_status_body import SessionStatusBody
from .settle_run_preparation_request import SettleRunPreparationRequest
from .snapshot_body import SnapshotBody
from .status_counts_body import StatusCountsBody
from .status_counts_body_counts import StatusCountsBodyCounts
from .suspension_request import SuspensionRequest
from .synchronous_run_start_request import SynchronousRunStartRequest
from .terminal_request import TerminalRequest
from .text_part_body import TextPartBody
from .thinking_part_body import ThinkingPartBody
from .tool_result_part_body import ToolResultPartBody
from .tool_use_part_body import ToolUsePartBody
from .tool_use_part_body_input import ToolUsePartBodyInput
from .transcript_check import TranscriptCheck
from .transcript_page_body import TranscriptPageBody
from .transcript_violation_body import TranscriptViolationBody
from .wait_until import WaitUntil
from .webhook_body import WebhookBody
from .webhook_delivery_body import WebhookDeliveryBody
from .webhook_event_type import WebhookEventType
from .webhook_list_body import WebhookListBody
from .whoami_body import WhoamiBody
from .whoami_body_mode import WhoamiBodyMode
from .whoami_body_permissions_item import WhoamiBodyPermissionsItem
from .whoami_body_role import WhoamiBodyRole

__all__ = (
    "AppendMemoryRequest",
    "AppendRecordRequest",
    "AppendRecordsRequest",
    "AppendResultBody",
    "AppendResultsBody",
    "AppendRunSeedRequest",
    "BeginRunSeedRequest",
    "CacheCheckpointPartBody",
    "CancellationRequest",
    "CheckpointBody",
    "ChildRunStartRequest",
    "ChildRunStartResultBody",
    "CitationBody",
    "CitationLocationBody",
    "CitationsPartBody",
    "CreatedWebhookBody",
    "CreateSessionRequest",
    "CreateWebhookRequest",
    "DeliveryPageBody",
    "DeliveryStatus",
    "DocumentFormat",
    "DocumentLocationBody",
    "DocumentPartBody",
    "EndSessionRequest",
    "FieldError",
    "HistoryPrefixBody",
    "ImageFormat",
    "ImagePartBody",
    "LiteralPartBody",
    "LiteralPartSeedRecordBody",
    "MemoryEventBody",
    "MemoryEventBodyData",
    "MemoryEventBodyLabelsType0",
    "MemoryEventBodyType",
    "MessageBody",
    "MessageBodyMetaType0",
    "MessagesSeedRecordBody",
    "NewSeedRecordBody",
    "OneShotChildRunStartRequest",
    "OneShotChildRunStartResultBody",
    "OneShotRunStartRequest",
    "OneShotRunStartResultBody",
    "PrefixSeedRecordBody",
    "PreparationAnswerBody",
    "PreparationOperationBody",
    "PreparedSeedRecordBody",
    "Problem",
    "PromptScopeBody",
    "PromptScopeBodyLabelsType0",
    "PublishRunSeedRequest",
    "RecordBody",
    "RecordCountsBody",
    "RecordCountsBodyRuns",
    "RecordCountsBodySessions",
    "RecordPageBody",
    "RenderedPromptBody",
    "RepairOutcome",
    "RepairResultBody",
    "Role",
    "RootRunStartRequest",
    "RootRunStartResultBody",
    "RunMetaBody",
    "RunMetaBodyLabels",
    "RunPageBody",
    "RunPreparationBody",
    "RunSeedBody",
    "RunStartBody",
    "RunStartBodyLabelsType0",
    "RunStartKind",
    "RunStartOutcome",
    "RunStatus",
    "SeedAppendResultBody",
    "SeedDeclarationBody",
    "SeedKind",
    "SeedPageBody",
    "SessionBody",
    "SessionPageBody",
    "SessionRunStartBody",
    "SessionRunStartBodyLabelsType0",
    "SessionStatus",
    "SessionStatusBody",
    "SettleRunPreparationRequest",
    "SnapshotBody",
    "StatusCountsBody",
    "StatusCountsBodyCounts",
    "SuspensionRequest",
    "SynchronousRunStartRequest",
    "TerminalRequest",
    "TextPartBody",
    "ThinkingPartBody",
    "ToolResultPartBody",
    "ToolUsePartBody",
    "ToolUsePartBodyInput",
    "TranscriptCheck",
    "TranscriptPageBody",
    "TranscriptViolationBody",
    "WaitUntil",
    "WebhookBody",
    "WebhookDeliveryBody",
    "WebhookEventType",
    "WebhookListBody",
    "WhoamiBody",
    "WhoamiBodyMode",
    "WhoamiBodyPermissionsItem",
    "WhoamiBodyRole",
)
