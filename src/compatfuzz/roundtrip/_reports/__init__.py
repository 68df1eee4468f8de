"""The reports of a run: JSON, JUnit XML, HTML, the merge of sharded runs' reports."""
