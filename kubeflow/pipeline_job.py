"""The compiled PipelineJob JSON: reading it and typing its runtime parameter values."""

import json
from typing import Any, Dict, List, Mapping


def read_pipeline_job(path: str) -> Dict[str, Any]:
  """A compiled PipelineJob JSON, checked to be one."""
  try:
    with open(path) as f:
      job = json.load(f)
  except OSError as error:
    raise ValueError(f'cannot read the compiled pipeline {path}: {error}; run the '
                     "'compile' command first") from None
  except json.JSONDecodeError as error:
    raise ValueError(f'{path} is not JSON ({error}); pass the file that '
                     "'compile' wrote") from None
  if not isinstance(job, dict) or 'pipelineSpec' not in job:
    raise ValueError(f"{path} has no 'pipelineSpec': it is not a PipelineJob JSON "
                     "written by 'compile'")
  return job


def declared_parameters(pipeline_job: Mapping[str, Any]) -> Dict[str, str]:
  """The pipeline's runtime parameters and their IR types, from the compiled JSON."""
  definitions = (pipeline_job['pipelineSpec']['root'].get('inputDefinitions', {})
                 .get('parameters', {}))
  return {name: spec.get('parameterType') or spec.get('type')
          for name, spec in definitions.items()}


def parse_parameter_values(pipeline_job: Mapping[str, Any],
                           assignments: List[str]) -> Dict[str, Any]:
  """Parses 'name=value' pairs into values of the types the pipeline declares.

  Raises:
    ValueError: a pair without '=', a name the pipeline does not declare, or a value
      that is not of the declared type.
  """
  declared = declared_parameters(pipeline_job)
  values: Dict[str, Any] = {}
  for assignment in assignments:
    name, equals, text = assignment.partition('=')
    if not equals:
      raise ValueError(f"parameter '{assignment}' is not of the form name=value")
    if name not in declared:
      known = ', '.join(sorted(declared)) or 'none'
      raise ValueError(f"the pipeline declares no runtime parameter '{name}' (it declares: "
                       f'{known})')
    parser = _PARSERS.get(declared[name])
    if parser is None:
      raise ValueError(f"parameter '{name}' has type {declared[name]}, which the command "
                       'line cannot set')
    try:
      values[name] = parser(text)
    except ValueError as error:
      raise ValueError(f"parameter '{name}' must be {declared[name]}, got '{text}' "
                       f'({error})') from None
  return values


def _parse_bool(text: str) -> bool:
  lowered = text.lower()
  if lowered in ('true', '1', 'yes'):
    return True
  if lowered in ('false', '0', 'no'):
    return False
  raise ValueError('use true or false')


# Types of pipeline parameters in the compiled spec: the IR's current names and the
# deprecated ones of schema 2.0.0, which KubeflowV2DagRunner writes by default.
_PARSERS = {
    'STRING': str, 'NUMBER_INTEGER': int, 'INT': int, 'NUMBER_DOUBLE': float,
    'DOUBLE': float, 'BOOLEAN': _parse_bool, 'LIST': json.loads,
    'STRUCT': json.loads,
}
