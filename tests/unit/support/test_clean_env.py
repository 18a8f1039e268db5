"""The autouse `clean_env` fixture: what one test writes to `os.environ` is gone in the next.

The two tests run in this order (one file runs in one worker, in its order). The first
writes a key the way `.env`'s loader does, straight into `os.environ` and in a letter case
`ENV_NAMES` does not list; the settings read names in any case, so had it stayed, the second
test's model would have been sent it.
"""

from __future__ import annotations

import os

from deep_research.config.endpoints import read_endpoints


def test_a_test_writes_a_key_into_the_environment_directly() -> None:
    os.environ["Llm_Api_Key"] = "left-behind"
    assert read_endpoints().llm_api_key is not None


def test_the_next_test_does_not_see_it() -> None:
    assert "Llm_Api_Key" not in os.environ
    assert read_endpoints().llm_api_key is None
