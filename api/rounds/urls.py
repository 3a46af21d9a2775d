from django.urls import path

from api.cases import FINDING_CASE

from . import views, work

case, comments, escalation = FINDING_CASE

urlpatterns = [
    path("rounds/", views.RoundListCreateView.as_view(), name="round-list"),
    path("rounds/batch", views.RoundBatchView.as_view(), name="round-batch"),
    path("rounds/<int:pk>/", views.RoundDetailView.as_view(), name="round-detail"),
    path("findings/", views.FindingListView.as_view(), name="finding-list"),
    path("findings/transition", work.FindingTransitionView.as_view(), name="finding-transition"),
    path("findings/<int:pk>/case", case.as_view(), name="finding-case"),
    path("findings/<int:pk>/case/comments", comments.as_view(), name="finding-case-comments"),
    path("findings/<int:pk>/case/escalation", escalation.as_view(), name="finding-case-escalation"),
    path("rounds/<int:pk>/void", work.RoundVoidView.as_view(), name="round-void"),
    path("rounds/<int:pk>/place", work.RoundPlaceView.as_view(), name="round-place"),
]
