"""A small FastAPI + Cadwyn shop whose customer API went through three versions (issue 20)."""
