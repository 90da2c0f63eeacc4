# The pipeline image: TFX 1.16 plus this project. Every component of the compiled
# pipeline runs in it (KubeflowV2DagRunner's default_image), and so does the Trainer's
# Vertex AI CustomJob and, with Dataflow, the Beam workers (--sdk_container_image).
#
# NOT BUILT: the machine this was written on has no Docker registry access, so nothing
# here is verified by a build or a run. Assumptions to check on the first build:
#   - the base image has Python 3.10 (setup.py requires >=3.10,<3.11) and tf-keras;
#   - it carries the Beam SDK harness (/opt/apache/beam/boot) Dataflow needs of a
#     custom worker image.
# What the project relies on: the sources live under /pipeline (kubeflow/deployment.py's
# IMAGE_PROJECT_DIR; ImportSchemaGen reads /pipeline/schema/schemas/<dataset>.pbtxt).
#
#   docker build -t REGION-docker.pkg.dev/PROJECT/REPO/tft-pipeline:cpu .
#   docker push REGION-docker.pkg.dev/PROJECT/REPO/tft-pipeline:cpu
# TPU variant: kubeflow/Dockerfile.tpu, built on top of this one.
FROM gcr.io/tfx-oss-public/tfx:1.16.0

WORKDIR /pipeline
COPY setup.py ./
COPY components ./components
COPY evaluation ./evaluation
COPY kubeflow ./kubeflow
COPY pipeline ./pipeline
COPY schema ./schema
COPY serving ./serving
COPY trainer_module ./trainer_module
# The image already holds tfx and its pinned dependencies: install the project only.
RUN python -m pip install --no-cache-dir --no-deps .
