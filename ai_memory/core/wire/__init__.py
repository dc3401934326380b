"""The HTTP API's one contract: what each route accepts and what it answers.

The routes validate their JSON bodies through ``parse`` (a 400 naming the field), the client
annotates its results with the answers (``client/api.py``), the MCP tools take their argument
types and output schemas from here, and ``core.openapi`` turns ``ROUTES`` into the OpenAPI
document the daemon serves at ``/v1/openapi.json`` and the docs print.

Bodies check shape, types and bounds; what needs the daemon's state or the sanitizer (a project
that exists, an empty summary) stays with the use case that owns the rule. Answers are typed
dicts: a route still builds plain JSON, and ``tests/test_wire_contract.py`` fails when a real
answer holds a field, or a type, the contract does not declare.
"""

from ai_memory.core.wire.answers import *  # noqa: F403
from ai_memory.core.wire.bodies import *  # noqa: F403
from ai_memory.core.wire.parse import *  # noqa: F403
from ai_memory.core.wire.routes import *  # noqa: F403
from ai_memory.core.wire.values import *  # noqa: F403
