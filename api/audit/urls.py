from django.urls import path, re_path

from api.cases import PROTECTION_FINDING_CASE

from . import counts, protection, reports, views

case, comments, escalation = PROTECTION_FINDING_CASE

urlpatterns = [
    path("reports/", reports.ReportListView.as_view(), name="report-list"),
    path("reports/<int:pk>/", reports.ReportDetailView.as_view(), name="report-detail"),
    path("reports/<int:pk>.csv", reports.ReportCsvView.as_view(), name="report-csv"),
    path("counts/", counts.CountListCreateView.as_view(), name="count-list"),
    re_path(
        r"^exports/(?P<what>rounds|findings|audit-log)\.csv$", views.ExportView.as_view(), name="export"
    ),
    path("protection/findings/", protection.ProtectionFindingListView.as_view(),
         name="protection-finding-list"),
    path("protection/findings/<int:pk>/", protection.ProtectionFindingDetailView.as_view(),
         name="protection-finding-detail"),
    path("protection/findings/<int:pk>/case", case.as_view(), name="protection-finding-case"),
    path("protection/findings/<int:pk>/case/comments", comments.as_view(), name="protection-finding-case-comments"),
    path("protection/findings/<int:pk>/case/escalation", escalation.as_view(),
         name="protection-finding-case-escalation"),
    path("protection/scores/", protection.SeatScoreListView.as_view(), name="seat-score-list"),
    path("players/<str:player>/", protection.PlayerView.as_view(), name="player-detail"),
    path("players/<str:player>/leak-test/", protection.PlayerLeakTestView.as_view(),
         name="player-leak-test"),
]
