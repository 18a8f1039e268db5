"""Real services the tests start themselves: PostgreSQL, Redis, Chroma.

Each is a context manager yielding a running server on a free 127.0.0.1 port in a temp dir,
stopped by its PID after. The programs come from apt (`binaries.APT_LINE`, which .ci/run
runs); a missing one fails the test with that line, it never skips.
"""

from tests.support.chroma_server import chroma_server
from tests.support.services.postgres import PostgresCluster, postgres_cluster
from tests.support.services.redis import RedisServer, redis_server

__all__ = ["PostgresCluster", "RedisServer", "chroma_server", "postgres_cluster", "redis_server"]
