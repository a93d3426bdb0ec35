# The service's image: web (the default command), Celery worker and beat (see docker-compose.yml).
#   docker build -t retail-backoffice .
# Settings come from the environment at run time (README, "Deployment"); nothing secret is baked in.
FROM python:3.11-slim

ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1 \
    DJANGO_SETTINGS_MODULE=config.settings \
    VAR_DIR=/app/var \
    STATIC_ROOT=/app/staticfiles

WORKDIR /app

# psycopg[binary] and the other wheels need no compiler; nothing else is installed. Static files are collected
# at build time, hashed and compressed for whitenoise (STATIC_MANIFEST, on in production). VAR_DIR is the only
# directory the service writes to (and only on the embedded setup).
COPY . /app
RUN pip install . \
    && groupadd --system --gid 10001 app \
    && useradd --system --uid 10001 --gid app --home-dir /app --no-create-home --shell /usr/sbin/nologin app \
    && DJANGO_ENV=development STATIC_MANIFEST=true python manage.py collectstatic --noinput --verbosity 0 \
    && mkdir -p /app/var \
    && chown -R app:app /app/var

USER app
EXPOSE 8000

# The same command the README and docker-compose.yml use; workers: WEB_CONCURRENCY or 2 x CPUs + 1.
CMD ["gunicorn", "-c", "config/gunicorn.conf.py", "config.wsgi"]
