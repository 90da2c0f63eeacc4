"""A retraining schedule's cron expression, in the forms Vertex AI and Kubeflow expect.

Vertex AI schedules take a five-field Unix cron ('minute hour day-of-month month
day-of-week') with an optional IANA time zone prefix, 'TZ=Europe/Paris 0 3 * * *'
(google.cloud.aiplatform.PipelineJob.create_schedule documents 'TZ=' and 'CRON_TZ=').
Kubeflow Pipelines recurring runs take six fields, seconds first (robfig/cron), and no
time zone: the cluster's scheduler uses its CRON_SCHEDULE_TIMEZONE (UTC by default).
"""

import dataclasses
import re
import zoneinfo
from typing import Optional

from croniter import croniter

_TZ_PREFIX = re.compile(r'^(?:CRON_TZ|TZ)=(\S+)\s+(.*)$')
# Each field's name and the values it takes.
_FIELDS = (('minute', '0-59'), ('hour', '0-23'), ('day of month', '1-31'),
           ('month', '1-12 or JAN-DEC'), ('day of week', '0-6 or SUN-SAT'))


@dataclasses.dataclass(frozen=True)
class Cron:
  """A five-field cron expression and the time zone it is read in.

  Attributes:
    expression: 'minute hour day-of-month month day-of-week', e.g. '0 3 * * *'.
    time_zone: an IANA time zone name ('Europe/Paris'); None: the scheduler's (UTC on
      Vertex AI).
  """
  expression: str
  time_zone: Optional[str] = None

  def __post_init__(self):
    fields = self.expression.split()
    if len(fields) != len(_FIELDS):
      raise ValueError(
          f"cron '{self.expression}' has {len(fields)} fields; give five: "
          f"{' '.join(name for name, _ in _FIELDS)}, e.g. '0 3 * * *' for 03:00 every day")
    for position, (name, values) in enumerate(_FIELDS):
      alone = ['*'] * len(_FIELDS)
      alone[position] = fields[position]
      if not croniter.is_valid(' '.join(alone)):
        raise ValueError(f"cron '{self.expression}': the {name} field '{fields[position]}' "
                         f'is not a cron field of values {values} (with * , / - ?)')
    if not croniter.is_valid(self.expression):
      raise ValueError(f"cron '{self.expression}' is not a valid cron expression")
    if self.time_zone is not None:
      try:
        zoneinfo.ZoneInfo(self.time_zone)
      except (zoneinfo.ZoneInfoNotFoundError, ValueError):
        raise ValueError(f"time zone '{self.time_zone}' is not an IANA time zone name, "
                         "e.g. 'Europe/Paris' or 'UTC'") from None

  @classmethod
  def parse(cls, text: str, time_zone: Optional[str] = None) -> 'Cron':
    """From '0 3 * * *' or 'TZ=Europe/Paris 0 3 * * *' (and an optional separate zone).

    Raises:
      ValueError: not five cron fields, an unknown zone, or two different zones.
    """
    text = text.strip()
    match = _TZ_PREFIX.match(text)
    if match:
      prefixed, text = match.group(1), match.group(2)
      if time_zone is not None and time_zone != prefixed:
        raise ValueError(f"cron '{text}' names time zone {prefixed} and --time-zone "
                         f'{time_zone}; give one')
      time_zone = prefixed
    return cls(' '.join(text.split()), time_zone)

  def vertex(self) -> str:
    """The Vertex AI form: 'TZ=<zone> <five fields>', or the five fields alone."""
    return f'TZ={self.time_zone} {self.expression}' if self.time_zone else self.expression

  def kubeflow(self) -> str:
    """The Kubeflow Pipelines form: six fields, at second 0.

    Raises:
      ValueError: the cron has a time zone, which a KFP recurring run cannot carry.
    """
    if self.time_zone:
      raise ValueError(
          f'Kubeflow Pipelines recurring runs take no time zone (got {self.time_zone}): '
          'their scheduler reads cron in the cluster-wide CRON_SCHEDULE_TIMEZONE (UTC by '
          'default); convert the hours or drop the time zone')
    return f'0 {self.expression}'
