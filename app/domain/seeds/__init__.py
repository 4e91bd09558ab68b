"""Run seeds and preparations (CONTRACT.md 15): the rules that need no stored state, the
canonical encoding the byte limits count, and the decisions over an attempt's state.

The storage operations (``app/storage/seeds/``) read an attempt under the run ID's lock,
call these in the contract's order and write what they allow. By subject: ``encoding``
(bounds, canonical JSON, positions), ``declarations`` (and their sources), ``records``,
``attempts`` (and the operation's owner), ``pages``.
"""

from .attempts import (
    Attempt,
    Owner,
    abandoned_error,
    apply_append,
    check_append_order,
    check_bound_to,
    check_operation,
    check_publication,
    check_publication_args,
    conflict,
    owner_of,
)
from .declarations import (
    check_begin_size,
    check_bool,
    check_declaration,
    check_text,
    declaration_from_json,
    declaration_json,
    prefix_from_json,
    prefix_json,
    same_declaration,
    source_of,
)
from .encoding import (
    DEFAULT_PAGE_LIMIT,
    MAX_COMMAND_BYTES,
    MAX_PAGE_BYTES,
    MAX_PAGE_RECORDS,
    AttemptState,
    Variant,
    base64_text,
    canonical,
    parse_position,
    position_text,
)
from .pages import (
    check_limit,
    page_after,
    page_length,
)
from .records import (
    NewSeedRecord,
    check_seed_record,
    record_wire,
    same_record,
)

__all__ = [
    "Attempt",
    "AttemptState",
    "DEFAULT_PAGE_LIMIT",
    "MAX_COMMAND_BYTES",
    "MAX_PAGE_BYTES",
    "MAX_PAGE_RECORDS",
    "NewSeedRecord",
    "Owner",
    "Variant",
    "abandoned_error",
    "apply_append",
    "base64_text",
    "canonical",
    "check_append_order",
    "check_begin_size",
    "check_bool",
    "check_bound_to",
    "check_declaration",
    "check_limit",
    "check_operation",
    "check_publication",
    "check_publication_args",
    "check_seed_record",
    "check_text",
    "conflict",
    "declaration_from_json",
    "declaration_json",
    "owner_of",
    "page_after",
    "page_length",
    "parse_position",
    "position_text",
    "prefix_from_json",
    "prefix_json",
    "record_wire",
    "same_declaration",
    "same_record",
    "source_of",
]
