from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [("exports", "0007_export_delivery_default_singular")]

    operations = [
        migrations.AddField(
            model_name="exportdelivery",
            name="lease_owner",
            field=models.CharField(blank=True, default="", max_length=200),
        ),
    ]
