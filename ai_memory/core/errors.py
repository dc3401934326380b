"""The one exception tree of ai-memory.

    AiMemoryError
    ├── ConfigError            bad config value or file (CLI exit 2)
    │   └── PortInUse          the port to serve on is taken (CLI exit 2)
    ├── DataDirLocked          another daemon holds the data dir (CLI exit 1)
    ├── InputError             a request or payload we refuse (HTTP 4xx)
    │   ├── PayloadTooLarge    413
    │   └── UnsupportedMedia   415
    ├── AuthError              403 (a client was refused: origin, host, someone else's record)
    │   └── TokenRefused       401 (no token, or a wrong one)
    ├── NotFound               404
    ├── Conflict               409
    ├── Overloaded             the writer queue is full (HTTP 429 + Retry-After)
    │   └── QuotaExceeded      a user's stored bytes reached today's quota (429 + Retry-After)
    ├── StorageError           the write path failed (HTTP 503; the client keeps its copy)
    │   └── DiskFull           ENOSPC
    ├── DaemonUnavailable      a client could not reach the daemon (CLI exit 1)
    │   ├── ConnectFailed      refused, DNS, connect timeout: definitive, never retried
    │   ├── ResponseIncomplete headers or body did not arrive in time: ambiguous, retried
    │   └── GatewayUnreachable the client's circuit breaker is open: no network touched
    ├── BackupError            a backup could not be written, or an archive not restored
    │   └── CorruptArchive     a member, checksum or manifest of an archive does not match
    ├── SyncError              the wiki could not be synced with its git remote (HTTP 502)
    └── LlmError               the configured LLM provider failed (a job is retried, a rerank falls back)
        ├── ProviderTimeout    no whole answer within llm.timeout_s
        └── MalformedOutput    the answer is not JSON matching its schema

Each class carries the HTTP status it answers with (``status``; 500 where none is its own), so
the server's edge and the client's reading of an answer use the one tree. Lower-layer errors
(sqlite3, OSError, json) are translated into these once, at the layer that sees them, with
``raise ... from exc``; the edges translate these into an HTTP status or a CLI exit code and never
show a traceback to a user.
"""

from __future__ import annotations


class AiMemoryError(Exception):
    """Base of every error ai-memory raises on purpose."""

    status: int = 500  # a class attribute (no typing.ClassVar: this module is on the hook's path)

    def __init__(self, message: str, detail: str | None = None, **fields: object) -> None:
        super().__init__(message)
        self.message = message
        self.detail = detail
        self.fields = fields  # extra JSON the edge adds to its answer (e.g. the match of a 409)


class ConfigError(AiMemoryError):
    """A configuration value has the wrong type or the file cannot be parsed."""


class PortInUse(ConfigError):
    """The address ``serve`` should bind is taken by another process."""


class DataDirLocked(AiMemoryError):
    """Another daemon is already serving this data dir."""


class InputError(AiMemoryError):
    """The caller sent something we cannot accept."""

    status = 400


class PayloadTooLarge(InputError):
    """The body or batch exceeds its bound."""

    status = 413


class UnsupportedMedia(InputError):
    """The body is not JSON."""

    status = 415


class AuthError(AiMemoryError):
    """The daemon refused the caller: no token, a wrong one, or a foreign origin."""

    status = 403


class TokenRefused(AuthError):
    """The request carried no token, or one no user holds."""

    status = 401


class NotFound(AiMemoryError):
    """The named thing does not exist."""

    status = 404


class Conflict(AiMemoryError):
    """The write collides with an existing record."""

    status = 409


class Overloaded(AiMemoryError):
    """The writer queue is full; retry after ``retry_after`` seconds."""

    status = 429

    def __init__(self, message: str, retry_after: float = 1.0) -> None:
        super().__init__(message)
        self.retry_after = retry_after


class QuotaExceeded(Overloaded):
    """A team user stored ``server.user_bytes_per_day`` today; retry after the next UTC midnight."""

    def __init__(self, message: str, detail: str, retry_after: float) -> None:
        super().__init__(message, retry_after)
        self.detail = detail


class StorageError(AiMemoryError):
    """The durable write failed; nothing was acknowledged."""

    status = 503


class DiskFull(StorageError):
    """The disk holding the data dir is full."""


class DaemonUnavailable(AiMemoryError):
    """The daemon could not be reached or did not answer in time."""


class ConnectFailed(DaemonUnavailable):
    """No connection could be made (refused, unknown host, connect timeout): the request never left."""


class ResponseIncomplete(DaemonUnavailable):
    """The request was sent but its answer did not finish: the daemon may or may not have acted on it."""


class GatewayUnreachable(DaemonUnavailable):
    """The circuit breaker is open: the call failed at once, without touching the network."""

    error = "gateway_unreachable"

    def __init__(self, message: str, retry_in_ms: int, detail: str | None = None) -> None:
        super().__init__(message, detail, error=self.error, breaker_open=True, retry_in_ms=retry_in_ms)
        self.retry_in_ms = retry_in_ms


class BackupError(AiMemoryError):
    """A backup could not be written, or an archive could not be restored."""


class CorruptArchive(BackupError):
    """An archive whose manifest, members or checksums do not match: nothing is restored from it."""


class SyncError(AiMemoryError):
    """Fetching from, merging with or pushing to the wiki's git remote failed; nothing local was lost."""

    status = 502


def error_for_status(status: int) -> type[AiMemoryError]:
    """The class a client raises for an error answer: the most general one that answers with
    ``status``, else StorageError for any other 5xx and InputError for any other 4xx."""
    kinds: list[type[AiMemoryError]] = [AiMemoryError]
    while kinds:
        kind = kinds.pop(0)
        if "status" in vars(kind) and kind.status == status and kind is not AiMemoryError:
            return kind
        kinds.extend(kind.__subclasses__())
    return StorageError if status >= 500 else InputError

class LlmError(AiMemoryError):
    """The LLM provider refused, failed or could not be reached; nothing was written from it."""


class ProviderTimeout(LlmError):
    """The provider did not give a whole answer in time."""


class MalformedOutput(LlmError):
    """The model's answer is not JSON, or does not match the schema it was asked for."""
