"""``python manage.py set_roles USERNAME auditor [supervisor …]``: give a person their roles."""

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError

from casino.roles import ROLE_NAMES
from casino.services import RoleError, user_roles_set
from trail.services import Actor


class Command(BaseCommand):
    help = f"Set a user's roles (any of: {', '.join(ROLE_NAMES)}); no role removes them all."

    def add_arguments(self, parser):
        parser.add_argument("username")
        parser.add_argument("roles", nargs="*")

    def handle(self, *args, username, roles, **options):
        User = get_user_model()
        try:
            user = User.objects.get(username=username)
        except User.DoesNotExist:
            raise CommandError(f"no user {username!r}") from None
        try:
            user_roles_set(user=user, roles=roles, actor=Actor.of_command("set_roles"))
        except RoleError as exc:
            raise CommandError(str(exc)) from None
        self.stdout.write(f"{username}: {', '.join(sorted(roles)) or 'no roles'}")
