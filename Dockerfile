# The components image: TFX 1.16 on CPU TensorFlow, with the dependency set the tests
# run against (requirements.lock) and this project. Every step of the compiled pipeline
# runs in it (the deployment's `image:`), and so do the Dataflow workers
# (--sdk_container_image). The Trainer's Vertex AI CustomJob runs the trainer image of
# its hardware instead (kubeflow/Dockerfile.trainer-tpu, kubeflow/Dockerfile.trainer-gpu),
# built on top of this one.
#
# NOT BUILT: the machine this was written on has no Docker registry access. What the tests
# check instead (tests/kubeflow/test_images.py): the lock resolves against the package
# index and `pip check` is clean in it. Assumptions to check on the first build: the base
# image has Python 3.10 and the Beam SDK harness (/opt/apache/beam/boot) Dataflow needs
# of a custom worker image.
# What the project relies on: the sources live under /pipeline (kubeflow/deployment.py's
# IMAGE_PROJECT_DIR; ImportSchemaGen reads /pipeline/schema/schemas/<dataset>.pbtxt).
#
#   docker build -t REGION-docker.pkg.dev/PROJECT/REPO/tft-components:TAG .
#   docker push REGION-docker.pkg.dev/PROJECT/REPO/tft-components:TAG
FROM gcr.io/tfx-oss-public/tfx:1.16.0

# TensorFlow's oneDNN kernels on every x86-64 CPU (common/cpu_kernels.py): TFX's
# executors load TensorFlow before the project's code.
ENV TF_ENABLE_ONEDNN_OPTS=1

WORKDIR /pipeline
COPY requirements.lock ./
RUN python -m pip install --no-cache-dir -r requirements.lock && python -m pip check
COPY setup.py ./
COPY common ./common
COPY components ./components
COPY evaluation ./evaluation
COPY kubeflow ./kubeflow
COPY pipeline ./pipeline
COPY schema ./schema
COPY serving ./serving
COPY trainer_module ./trainer_module
RUN python -m pip install --no-cache-dir --no-deps .
