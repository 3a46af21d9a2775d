from django.urls import path, re_path

from . import reports, views

urlpatterns = [
    path("reports/", reports.ReportListView.as_view(), name="report-list"),
    path("reports/<int:pk>/", reports.ReportDetailView.as_view(), name="report-detail"),
    path("reports/<int:pk>.csv", reports.ReportCsvView.as_view(), name="report-csv"),
    re_path(
        r"^exports/(?P<what>rounds|findings|audit-log)\.csv$", views.ExportView.as_view(), name="export"
    ),
]
