"""Incoming and outgoing orders lose their own ``account_id`` index: the ``(account, state)`` index leads with the
column, and one index less is written per order.

Only the index is dropped (the same name on PostgreSQL and SQLite). Django's own ``AlterField`` would drop and
re-add the foreign key on PostgreSQL (re-checking every row under lock) and rebuild both tables on SQLite.
"""

import django.db.models.deletion
from django.db import migrations, models

INDEXES = {
    "orders_incomingorder": "orders_incomingorder_account_id_a13f6084",
    "orders_outgoingorder": "orders_outgoingorder_account_id_fae9050c",
}


class Migration(migrations.Migration):
    dependencies = [
        ("accounts", "0005_auth_failure_window"),
        ("orders", "0003_received_order_location_index"),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.AlterField(
                    model_name=model_name,
                    name="account",
                    field=models.ForeignKey(
                        db_index=False,
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="+",
                        to="accounts.account",
                    ),
                )
                for model_name in ("incomingorder", "outgoingorder")
            ],
            database_operations=[
                migrations.RunSQL(
                    sql=f'DROP INDEX IF EXISTS "{index}"',
                    reverse_sql=f'CREATE INDEX "{index}" ON "{table}" ("account_id")',
                )
                for table, index in INDEXES.items()
            ],
        )
    ]
