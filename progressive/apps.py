from django.apps import AppConfig


class ProgressiveConfig(AppConfig):
    name = "progressive"
    verbose_name = "Progressive pools"
