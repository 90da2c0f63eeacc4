"""Vocabularies are found under the file names Transform gives them, whatever the column's
name: by the warm start, the baseline check and `tft-predict`."""

import dataclasses

from schema.dataset_spec import Column, DType, Role
from schema.datasets import SYNTHETIC
from serving import published_models
from trainer_module import vocabularies, window_inputs
from trainer_module.tft.model import STATIC_EMBEDDING


def test_a_dotted_column_name_is_found_under_transforms_file_name(tmp_path):
  assert vocabularies.file_name('store.type') == 'store_type'
  (tmp_path / vocabularies.VOCABULARY_DIR).mkdir()
  (tmp_path / vocabularies.VOCABULARY_DIR / 'store_type').write_text('mall\nstreet\n')
  assert published_models.vocabulary(str(tmp_path), 'store.type') == {'mall', 'street'}
  spec = dataclasses.replace(SYNTHETIC, columns=SYNTHETIC.columns + (
      Column('store.type', Role.STATIC, DType.CATEGORICAL),))
  assert window_inputs.table_vocabularies(spec)[STATIC_EMBEDDING][-1] == 'store_type'
