"""Installs the pipeline's packages so TFX can import its functions by dotted path."""

import setuptools

setuptools.setup(
    name='tft-tfx-pipeline',
    version='0.1.0',
    description='A TFX pipeline that trains a Temporal Fusion Transformer, TPU-aware',
    python_requires='>=3.10,<3.11',
    packages=setuptools.find_packages(include=[
        'common', 'common.*', 'pipeline', 'pipeline.*', 'components', 'components.*',
        'trainer_module', 'trainer_module.*', 'schema', 'schema.*', 'kubeflow', 'kubeflow.*',
        'serving', 'serving.*', 'evaluation', 'evaluation.*']),
    package_data={'schema': ['schemas/*.pbtxt', 'specs/*.yaml']},
    # Exact versions live in requirements.lock; these are the direct dependencies.
    install_requires=[
        'tfx==1.16.0',
        'apache-beam[gcp]==2.61.0',
        'kfp==2.5.0',
        'kfp-pipeline-spec>=0.2.2',
        'matplotlib',
        'croniter',
        'Jinja2',
        'lightgbm',  # the run's gradient-boosted baseline (evaluation/gbm_baseline.py)
        'tzdata',  # time zones for zoneinfo where the system has none (slim containers)
    ],
    entry_points={'console_scripts': [
        'tft-pipeline=pipeline.local_runner:main',
        'tft-cloud=kubeflow.cli:main',
        'tft-predict=serving.predict:main',
        'tft-report=serving.report:main',
    ]},
)
