from django.urls import path

from . import views

urlpatterns = [
    path("rounds/", views.RoundListCreateView.as_view(), name="round-list"),
    path("rounds/batch", views.RoundBatchView.as_view(), name="round-batch"),
    path("rounds/<int:pk>/", views.RoundDetailView.as_view(), name="round-detail"),
    path("findings/", views.FindingListView.as_view(), name="finding-list"),
]
