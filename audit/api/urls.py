from django.urls import re_path

from . import views

urlpatterns = [
    re_path(
        r"^exports/(?P<what>rounds|findings|audit-log)\.csv$", views.ExportView.as_view(), name="export"
    ),
]
