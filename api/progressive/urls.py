from django.urls import path

from . import views

urlpatterns = [
    path("pools/", views.PoolListView.as_view(), name="pool-list"),
    path("pools/<slug:code>/", views.PoolDetailView.as_view(), name="pool-detail"),
    path("pools/<slug:code>/adjustments", views.MeterAdjustmentView.as_view(), name="pool-adjust"),
    path(
        "pools/<slug:code>/overflow-transfers", views.OverflowTransferView.as_view(),
        name="pool-overflow-transfer",
    ),
    path("pools/<slug:code>/ledger-check", views.LedgerCheckView.as_view(), name="pool-ledger-check"),
    path("adjustment-requests/", views.MeterAdjustmentRequestListView.as_view(), name="adjustment-request-list"),
    path(
        "adjustment-requests/<int:pk>", views.MeterAdjustmentRequestDetailView.as_view(),
        name="adjustment-request-detail",
    ),
    path(
        "adjustment-requests/<int:pk>/approve", views.MeterAdjustmentApproveView.as_view(),
        name="adjustment-request-approve",
    ),
    path(
        "adjustment-requests/<int:pk>/reject", views.MeterAdjustmentRejectView.as_view(),
        name="adjustment-request-reject",
    ),
    path("pools/<slug:code>/versions", views.PoolVersionCreateView.as_view(), name="pool-version-create"),
    path("pool-versions/", views.PoolVersionListView.as_view(), name="pool-version-list"),
    path(
        "pool-version-requests/", views.PoolVersionRequestListView.as_view(),
        name="pool-version-request-list",
    ),
    path(
        "pool-version-requests/<int:pk>", views.PoolVersionRequestDetailView.as_view(),
        name="pool-version-request-detail",
    ),
    path(
        "pool-version-requests/<int:pk>/approve", views.PoolVersionApproveView.as_view(),
        name="pool-version-request-approve",
    ),
    path(
        "pool-version-requests/<int:pk>/reject", views.PoolVersionRejectView.as_view(),
        name="pool-version-request-reject",
    ),
    path("meter-events/", views.MeterEventListView.as_view(), name="meter-event-list"),
    path("hits/", views.HitListView.as_view(), name="hit-list"),
    path("meter-readings/", views.MeterReadingListCreateView.as_view(), name="meter-reading-list"),
]
