"""The names of the structured-output strategies (``structured`` implements them), apart so the
CLI can offer ``--structured-output`` without importing pydantic and the structured layer."""

STRATEGIES = ("json_schema", "json_object", "tools", "prompt")
CHOICES = ("auto",) + STRATEGIES
