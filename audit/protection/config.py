"""Game protection's thresholds, from Django settings (``PROTECTION_*``), with the mathematics' defaults."""

from __future__ import annotations

from dataclasses import dataclass

from django.conf import settings

from rounds.protection.conformance import ConformanceSettings
from rounds.protection.fingerprints import SweetheartSettings
from rounds.protection.leak import LeakSettings


@dataclass(frozen=True, slots=True)
class ProtectionConfig:
    leak: LeakSettings
    sweetheart: SweetheartSettings
    conformance: ConformanceSettings
    history_days: int  # how far back a player's leak test and a dealer's sweetheart test look


def protection_config() -> ProtectionConfig:
    leak, sweetheart, conformance = LeakSettings(), SweetheartSettings(), ConformanceSettings()
    return ProtectionConfig(
        LeakSettings(
            threshold=float(getattr(settings, "PROTECTION_LEAK_THRESHOLD", leak.threshold)),
            share=float(getattr(settings, "PROTECTION_LEAK_SHARE", leak.share)),
        ),
        SweetheartSettings(
            threshold=float(getattr(settings, "PROTECTION_SWEETHEART_P_VALUE", sweetheart.threshold)),
            min_favourable=int(getattr(settings, "PROTECTION_SWEETHEART_MIN_ERRORS", sweetheart.min_favourable)),
        ),
        ConformanceSettings(
            min_observations=int(getattr(settings, "PROTECTION_PAY_TABLE_MIN_OBSERVATIONS",
                                         conformance.min_observations)),
        ),
        history_days=int(getattr(settings, "PROTECTION_HISTORY_DAYS", 90)),
    )
