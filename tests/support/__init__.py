"""What the tests are built from: scripted models and servers, fakes, run helpers."""
