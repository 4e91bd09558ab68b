"""The routers, one per resource."""
