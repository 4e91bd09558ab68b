"""The database itself, with no contract rule: engines and dialects, tables, migrations and
inspection, statements sent on the driver connection, prebuilt statements and row mapping,
read deadlines, replicas, transient failures, and how a store call waits."""
