# The container image (.ci/build-image, docs/image.md), label "image" (ctest -L image):
#   image             builds the OCI archive, checks its contents and runs it (test/image/image.sh)
#   image_dockerfile  the Dockerfile and .ci/build-image describe the same image
# `image` exits 77 (Skipped, reason in its output) only when umoci/jq/skopeo cannot be installed
# or nothing can enter the image. Its work directory, ${PROJECT_BINARY_DIR}/image, is kept so that
# the Release build inside it is incremental.
add_test(NAME image COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/image/image.sh)
set_tests_properties(image PROPERTIES LABELS image SKIP_RETURN_CODE 77 TIMEOUT 900
  ENVIRONMENT "SLUICE_SOURCE_DIR=${PROJECT_SOURCE_DIR};SLUICE_BINARY_DIR=${PROJECT_BINARY_DIR}")
add_test(NAME image_dockerfile COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/image/dockerfile-sync.sh)
set_tests_properties(image_dockerfile PROPERTIES LABELS image
  ENVIRONMENT "SLUICE_SOURCE_DIR=${PROJECT_SOURCE_DIR}")
