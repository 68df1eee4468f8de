"""The service: two routes written once, against the HEAD schemas; Cadwyn serves every version.

Run with ``uvicorn shop.app:app`` from examples/cadwyn_shop (send ``x-api-version: 2023-01-01``).
"""

from __future__ import annotations

from importlib.metadata import version

from cadwyn import Cadwyn, VersionedAPIRouter

from shop.schemas import Customer, CustomerResource
from shop.versions import version_bundle

router = VersionedAPIRouter()
_customers: dict[int, Customer] = {}  # a dict stands in for the database


@router.post("/customers", response_model=CustomerResource)
async def create_customer(customer: Customer) -> CustomerResource:
    customer_id = len(_customers) + 1
    _customers[customer_id] = customer
    return CustomerResource(id=customer_id, **customer.model_dump())


@router.get("/customers/{customer_id}", response_model=CustomerResource)
async def get_customer(customer_id: int) -> CustomerResource:
    return CustomerResource(id=customer_id, **_customers[customer_id].model_dump())


# Cadwyn 8 warns unless its deprecated changelog is switched off; Cadwyn 9 removed the
# changelog and warns when the argument is given at all
_CHANGELOG_OFF = {"changelog_url": None} if int(version("cadwyn").split(".")[0]) < 9 else {}
app = Cadwyn(versions=version_bundle, **_CHANGELOG_OFF)
app.generate_and_include_versioned_routers(router)
