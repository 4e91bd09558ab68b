from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from ..types import UNSET, Unset
from typing import cast

if TYPE_CHECKING:
  from ..models.field_error import FieldError
  from ..models.transcript_violation_body import TranscriptViolationBody





T = TypeVar("T", bound="Problem")



@_attrs_define
class Problem:
    """ An RFC 9457 problem; ``code`` is the stable machine-readable reason.

        Attributes:
            type_ (str): `urn:runtime-store:problem:` and the code.
            title (str):
            status (int): The HTTP status.
            detail (str):
            code (str): Stable error code (docs/contract.md section 6).
            run_id (None | str | Unset):
            session_id (None | str | Unset):
            event_key (None | str | Unset):
            line (int | None | Unset): The 1-based line of an imported session file that broke a rule.
            errors (list[FieldError] | None | Unset): The invalid fields of a validation error.
            violations (list[TranscriptViolationBody] | None | Unset): The broken rules of an `invalid_transcript` problem.
            request_id (None | str | Unset):
     """

    type_: str
    title: str
    status: int
    detail: str
    code: str
    run_id: None | str | Unset = UNSET
    session_id: None | str | Unset = UNSET
    event_key: None | str | Unset = UNSET
    line: int | None | Unset = UNSET
    errors: list[FieldError] | None | Unset = UNSET
    violations: list[TranscriptViolationBody] | None | Unset = UNSET
    request_id: None | str | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)





    def to_dict(self) -> dict[str, Any]:
        from ..models.field_error import FieldError # noqa: PLC0415
        from ..models.transcript_violation_body import TranscriptViolationBody # noqa: PLC0415
        type_ = self.type_

        title = self.title

        status = self.status

        detail = self.detail

        code = self.code

        run_id: None | str | Unset
        if isinstance(self.run_id, Unset):
            run_id = UNSET
        else:
            run_id = self.run_id

        session_id: None | str | Unset
        if isinstance(self.session_id, Unset):
            session_id = UNSET
        else:
            session_id = self.session_id

        event_key: None | str | Unset
        if isinstance(self.event_key, Unset):
            event_key = UNSET
        else:
            event_key = self.event_key

        line: int | None | Unset
        if isinstance(self.line, Unset):
            line = UNSET
        else:
            line = self.line

        errors: list[dict[str, Any]] | None | Unset
        if isinstance(self.errors, Unset):
            errors = UNSET
        elif isinstance(self.errors, list):
            errors = []
            for errors_type_0_item_data in self.errors:
                errors_type_0_item = errors_type_0_item_data.to_dict()
                errors.append(errors_type_0_item)


        else:
            errors = self.errors

        violations: list[dict[str, Any]] | None | Unset
        if isinstance(self.violations, Unset):
            violations = UNSET
        elif isinstance(self.violations, list):
            violations = []
            for violations_type_0_item_data in self.violations:
                violations_type_0_item = violations_type_0_item_data.to_dict()
                violations.append(violations_type_0_item)


        else:
            violations = self.violations

        request_id: None | str | Unset
        if isinstance(self.request_id, Unset):
            request_id = UNSET
        else:
            request_id = self.request_id


        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({
            "type": type_,
            "title": title,
            "status": status,
            "detail": detail,
            "code": code,
        })
        if run_id is not UNSET:
            field_dict["run_id"] = run_id
        if session_id is not UNSET:
            field_dict["session_id"] = session_id
        if event_key is not UNSET:
            field_dict["event_key"] = event_key
        if line is not UNSET:
            field_dict["line"] = line
        if errors is not UNSET:
            field_dict["errors"] = errors
        if violations is not UNSET:
            field_dict["violations"] = violations
        if request_id is not UNSET:
            field_dict["request_id"] = request_id

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.field_error import FieldError # noqa: PLC0415
        from ..models.transcript_violation_body import TranscriptViolationBody # noqa: PLC0415
        d = dict(src_dict)
        type_ = d.pop("type")

        title = d.pop("title")

        status = d.pop("status")

        detail = d.pop("detail")

        code = d.pop("code")

        def _parse_run_id(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        run_id = _parse_run_id(d.pop("run_id", UNSET))


        def _parse_session_id(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        session_id = _parse_session_id(d.pop("session_id", UNSET))


        def _parse_event_key(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        event_key = _parse_event_key(d.pop("event_key", UNSET))


        def _parse_line(data: object) -> int | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(int | None | Unset, data)

        line = _parse_line(d.pop("line", UNSET))


        def _parse_errors(data: object) -> list[FieldError] | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, list):
                    raise TypeError()
                errors_type_0 = []
                _errors_type_0 = data
                for errors_type_0_item_data in (_errors_type_0):
                    errors_type_0_item = FieldError.from_dict(errors_type_0_item_data)



                    errors_type_0.append(errors_type_0_item)

                return errors_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(list[FieldError] | None | Unset, data)

        errors = _parse_errors(d.pop("errors", UNSET))


        def _parse_violations(data: object) -> list[TranscriptViolationBody] | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, list):
                    raise TypeError()
                violations_type_0 = []
                _violations_type_0 = data
                for violations_type_0_item_data in (_violations_type_0):
                    violations_type_0_item = TranscriptViolationBody.from_dict(violations_type_0_item_data)



                    violations_type_0.append(violations_type_0_item)

                return violations_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(list[TranscriptViolationBody] | None | Unset, data)

        violations = _parse_violations(d.pop("violations", UNSET))


        def _parse_request_id(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        request_id = _parse_request_id(d.pop("request_id", UNSET))


        problem = cls(
            type_=type_,
            title=title,
            status=status,
            detail=detail,
            code=code,
            run_id=run_id,
            session_id=session_id,
            event_key=event_key,
            line=line,
            errors=errors,
            violations=violations,
            request_id=request_id,
        )


        problem.additional_properties = d
        return problem

    @property
    def additional_keys(self) -> list[str]:
        return list(self.additional_properties.keys())

    def __getitem__(self, key: str) -> Any:
        return self.additional_properties[key]

    def __setitem__(self, key: str, value: Any) -> None:
        self.additional_properties[key] = value

    def __delitem__(self, key: str) -> None:
        del self.additional_properties[key]

    def __contains__(self, key: str) -> bool:
        return key in self.additional_properties
