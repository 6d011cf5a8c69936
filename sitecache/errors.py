"""The one error value of sitecache: a code, a message and data.

`RestError` mirrors WordPress's ``WP_Error``: it can hold several messages under several codes,
each code with its own data. The first code, its first message and its last data are what a
client sees as ``code``, ``message`` and ``data``; everything else is serialized under
``additional_errors`` (and ``additional_data`` when one code carried data more than once).
It subclasses `Exception`, so handlers may either return it or raise it.
"""

from __future__ import annotations

from typing import Any

__all__ = ["RestError"]


class RestError(Exception):
    """An error with a machine-readable code, a human message and optional data.

    Args:
        code: the error code, such as ``rest_invalid_param``.
        message: a sentence for humans.
        data: extra data; ``status`` in it is the HTTP status when the error becomes a response.
    """

    def __init__(self, code: str, message: str, data: Any = None) -> None:
        super().__init__(code, message)
        self._first = code  # codes are only ever added after it
        self._messages: dict[str, list[str]] = {code: [message]}
        self._data: dict[str, list[Any]] = {code: [] if data is None else [data]}

    # ------------------------------------------------------------------ the first error
    @property
    def code(self) -> str:
        """The first error code."""
        return self._first

    @property
    def message(self) -> str:
        """The first message of the first code."""
        return self._messages[self.code][0]

    @property
    def data(self) -> Any:
        """The last data attached to the first code, or ``None``."""
        return self.get_error_data(self.code)

    @data.setter
    def data(self, value: Any) -> None:
        self.add_data(value)

    @property
    def status(self) -> int:
        """The HTTP status this error answers with, else 500.

        As ``rest_convert_error_to_response``: the ``status`` of the last data entry of the first
        code that has one (data added in several steps keeps an earlier status). A numeric string
        status is accepted, as WordPress accepts it.
        """
        for data in reversed(self._data[self._first]):
            if isinstance(data, dict) and "status" in data:
                status = data["status"]
                if status.__class__ is int:
                    return status  # int() of an int is itself
                try:
                    return int(status)
                except (TypeError, ValueError):
                    return 500
        return 500

    # ------------------------------------------------------------------ building
    def add(self, code: str, message: str, data: Any = None) -> RestError:
        """Add another message (and optionally data) under ``code``; returns ``self``."""
        self._messages.setdefault(code, []).append(message)
        self._data.setdefault(code, [])
        if data is not None:
            self._data[code].append(data)
        return self

    def add_data(self, data: Any, code: str | None = None) -> RestError:
        """Attach data to ``code`` (the first code by default); the newest data wins."""
        key = self.code if code is None else code
        self._data.setdefault(key, []).append(data)
        self._messages.setdefault(key, [])
        return self

    def with_status(self, status: int) -> RestError:
        """Set ``status`` in the first code's data, keeping its other keys; returns ``self``."""
        data = self.data
        merged = dict(data) if isinstance(data, dict) else {}
        merged["status"] = status
        return self.add_data(merged)

    # ------------------------------------------------------------------ reading
    def get_error_codes(self) -> list[str]:
        """Every code, in the order they were first added."""
        return list(self._messages)

    def get_error_messages(self, code: str | None = None) -> list[str]:
        """The messages of one code, or of every code in order when ``code`` is ``None``."""
        if code is not None:
            return list(self._messages.get(code, []))
        return [message for messages in self._messages.values() for message in messages]

    def get_error_data(self, code: str | None = None) -> Any:
        """The newest data of ``code`` (the first code by default), or ``None``."""
        entries = self._data.get(self.code if code is None else code, [])
        return entries[-1] if entries else None

    def to_dict(self) -> dict[str, Any]:
        """The JSON body of this error: ``{"code", "message", "data"}`` plus additional errors.

        Mirrors ``rest_convert_error_to_response``: ``data`` is always present; earlier data of the
        first code appear as ``additional_data``; every other message appears in
        ``additional_errors`` (later messages of the first code first, then the other codes).
        """
        first = self._first
        by_code = self._messages
        entries = self._data[first]
        if len(by_code) == 1 and len(entries) < 2 and len(by_code[first]) == 1:
            # One code, one message, at most one data: nothing additional (most errors).
            return {
                "code": first,
                "message": by_code[first][0],
                "data": entries[-1] if entries else None,
            }
        body: dict[str, Any] = {"code": first, "message": self.message, "data": self.data}
        earlier = self._data[first][:-1]
        if earlier:
            body["additional_data"] = earlier
        additional: list[dict[str, Any]] = []
        for code, messages in self._messages.items():
            data_entries = self._data.get(code, [])
            for index, message in enumerate(messages):
                if code == first and index == 0:
                    continue
                entry: dict[str, Any] = {
                    "code": code,
                    "message": message,
                    "data": data_entries[-1] if data_entries else None,
                }
                if code != first and len(data_entries) > 1:
                    entry["additional_data"] = data_entries[:-1]
                additional.append(entry)
        if additional:
            body["additional_errors"] = additional
        return body

    def __repr__(self) -> str:
        return f"RestError({self.code!r}, {self.message!r}, {self.data!r})"

    def __str__(self) -> str:
        return self.message
