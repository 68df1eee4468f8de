"""The service: two routes written once, against the HEAD schemas; Cadwyn serves every version.

Run with ``uvicorn shop.app:app`` from examples/cadwyn_shop (send ``x-api-version: 2023-01-01``).
"""

from __future__ import annotations

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


app = Cadwyn(versions=version_bundle, changelog_url=None)  # the changelog feature is deprecated
app.generate_and_include_versioned_routers(router)
