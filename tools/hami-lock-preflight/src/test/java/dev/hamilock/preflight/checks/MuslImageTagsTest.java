package dev.hamilock.preflight.checks;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The musl-image check missed {@code python:3.12-alpine3.19}: Alpine variants carry the Alpine
 * version in the word ({@code alpine3.19}). Each form musl-based images really use is matched, and
 * glibc look-alikes are not.
 */
class MuslImageTagsTest {

  @ParameterizedTest
  @ValueSource(
      strings = {
        "python:3.12-alpine3.19",
        "node:20-alpine3.18",
        "golang:1.22-alpine3.20@sha256:abc",
        "nginx:stable-alpine3.19-perl",
        "rust:1-alpine3",
        "ruby:3.3-alpine3.19.1",
        "python:3.12-alpine",
        "nginx:alpine-slim",
        "alpine",
        "alpine:3.19",
        "docker.io/library/alpine:latest",
        "alpinelinux/docker-cli:latest",
        "busybox:1.36-musl",
        "busybox:1.36.1-uclibc",
        "clux/muslrust:stable",
        "ekidd/rust-musl-builder:latest",
        "registry:5000/team/alpine-cuda:1",
        "PYTHON:3.12-ALPINE3.19",
        " python:3.12-alpine3.19 "
      })
  void muslForms(String image) {
    assertThat(MuslImageCheck.isMusl(image)).as(image).isTrue();
  }

  @ParameterizedTest
  @ValueSource(
      strings = {
        "python:3.12-slim",
        "python:3.12-slim-bookworm",
        "ubuntu:22.04",
        "nvidia/cuda:12.4.1-runtime-ubuntu22.04",
        "gcr.io/distroless/base-debian12",
        "gcr.io/distroless/cc",
        "cgr.dev/chainguard/python:latest",
        "busybox:1.36-glibc",
        "registry:5000/alpinist/app:1",
        "example.com/alpineer:1",
        "team/app:alpinex",
        "myrepo/muslim-calendar:1",
        "python:3.12@sha256:alpine3"
      })
  void glibcForms(String image) {
    assertThat(MuslImageCheck.isMusl(image)).as(image).isFalse();
  }
}
