# The call log's writer (integrations.call_log) stamps created_at when the call ends and inserts the row a moment
# later: the field is no longer auto_now_add (which would stamp the insert). The column is the same (NOT NULL, no
# database default), so only the state changes: no table rebuild on SQLite.

import django.utils.timezone
from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("integrations", "0005_metrics_indexes"),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.AlterField(
                    model_name="integrationcall",
                    name="created_at",
                    field=models.DateTimeField(default=django.utils.timezone.now, editable=False),
                ),
            ],
        ),
    ]
