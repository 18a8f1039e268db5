"""The model client: one chat model per role (`models`), every provider, the call policy
(deadline, retries, readable errors) and the small-model salvage of replies (`toolcalls/`)."""
