import os

from django.core.wsgi import get_wsgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "casino.settings")
application = get_wsgi_application()

from trail.privileges import refuse_the_owner  # noqa: E402  (Django is set up by the line above)

refuse_the_owner()
