"""Model-based random sequences of writes and table services, some steps killed midway,
checked against a model of the rows and against hudi-rs (see docs/development.md)."""
